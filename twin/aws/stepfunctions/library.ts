// The polyfill must run before aws-local-stepfunctions is evaluated and used.
import '../promise-with-resolvers.js';

export {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type StateMachineDefinition,
  type RunOptions,
} from 'aws-local-stepfunctions';
