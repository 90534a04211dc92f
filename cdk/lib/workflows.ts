import { Stack, ArnFormat, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  STATE_MACHINES,
  WORKFLOW_FUNCTIONS,
  functionArnVariable,
  stateMachineArnVariable,
  stateMachinePhysicalName,
  type WorkflowFunctionId,
} from '../../src/contracts/functions.js';
import { applyPolicy } from '../../src/contracts/definition-policy.js';
import type { PaperclipConfig } from '../../src/config/schema.js';
import { allStates, isDistributedMap, readStateMachineFile, substitutionVariables, type AslMachine } from '../../src/contracts/asl.js';
import { guardedWriteArns } from './access-grants.js';
import type { WorkingBucket } from './working-bucket.js';

type StateMachineId = (typeof STATE_MACHINES)[number]['id'];

export interface WorkflowsProps {
  prefix: string;
  functions: Readonly<Record<WorkflowFunctionId, IFunction>>;
  /** Path of statemachines/<file>; tests may point it at fixtures. */
  definitionPath: (file: string) => string;
  logRetention: RetentionDays;
  /** Numbers the ASL takes from policy (the approval timeout), set the same way the local stack sets them. */
  writePolicy: PaperclipConfig['write_policy'];
  /** Where a Distributed Map reads its items and writes its results. */
  /** The Distributed Map reads its items from and writes its results to the working bucket. */
  working: WorkingBucket;
}

/** Whether a definition has a Map state in DISTRIBUTED mode (it then runs its items as child executions of itself). */
export function hasDistributedMap(definition: string): boolean {
  return [...allStates(JSON.parse(definition) as AslMachine).values()].some(isDistributedMap);
}

/**
 * Task resources the workflow roles are granted for. Anything else in an ASL
 * file would fail at run time with AccessDenied, so it fails the synth instead.
 */
const GRANTED_TASK_RESOURCES = [
  /^\$\{[A-Za-z]+FunctionArn\}$/,
  /^arn:aws:states:::lambda:invoke(\.waitForTaskToken)?$/,
  /^arn:aws:states:::states:startExecution(\.sync(:2)?)?$/,
];

export function ungrantedTaskResources(definition: string): string[] {
  const machine = JSON.parse(definition) as AslMachine;
  return [...allStates(machine)]
    .filter(([, state]) => state.Type === 'Task' && !GRANTED_TASK_RESOURCES.some((allowed) => allowed.test(state.Resource ?? '')))
    .map(([name, state]) => `${name}: ${state.Resource ?? '(no Resource)'}`);
}

/** The Step Functions service integration .sync:2 uses to learn that a child execution ended. */
const SYNC_EVENTS_RULE = 'StepFunctionsGetEventsForStepFunctionsExecutionRule';

/**
 * The ASL files in statemachines/ are the single source of truth; this
 * construct only substitutes ARNs into them and gives each workflow a role
 * that can invoke exactly the functions its definition names.
 */
export class Workflows extends Construct {
  readonly byId: Readonly<Record<StateMachineId, StateMachine>>;
  readonly logGroups: Readonly<Record<StateMachineId, LogGroup>>;
  readonly roles: Readonly<Record<StateMachineId, Role>>;
  /** Physical names, e.g. paperclip-guarded-write. */
  readonly names: Readonly<Record<StateMachineId, string>>;
  /** What each definition's ${…} variables were replaced with. */
  readonly substitutions: Readonly<Record<StateMachineId, Record<string, string>>>;

  constructor(scope: Construct, id: string, props: WorkflowsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const guardedWriteName = stateMachinePhysicalName(props.prefix, 'guarded-write');
    const childArns = guardedWriteArns(this, guardedWriteName);

    // Everything a definition may refer to. The guarded-write ARN is built from its
    // name so the batch can refer to it whatever order the two are created in.
    const available: Record<string, string> = {};
    for (const fn of WORKFLOW_FUNCTIONS) available[functionArnVariable(fn.id)] = props.functions[fn.id].functionArn;
    for (const machine of STATE_MACHINES) {
      available[stateMachineArnVariable(machine.id)] = stack.formatArn({
        service: 'states',
        resource: 'stateMachine',
        resourceName: stateMachinePhysicalName(props.prefix, machine.name),
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    }

    const byId = {} as Record<StateMachineId, StateMachine>;
    const logGroups = {} as Record<StateMachineId, LogGroup>;
    const substitutions = {} as Record<StateMachineId, Record<string, string>>;
    const roles = {} as Record<StateMachineId, Role>;
    const names = {} as Record<StateMachineId, string>;

    for (const machine of STATE_MACHINES) {
      const path = props.definitionPath(machine.file);
      const definition = applyPolicy(readStateMachineFile(path), props.writePolicy);
      const used = substitutionVariables(definition);
      const unknown = used.filter((name) => !(name in available));
      if (unknown.length > 0) {
        throw new Error(
          `${path} uses \${${unknown.join('}, ${')}}, which the CDK app does not provide; ` +
            `known variables: ${Object.keys(available).sort().join(', ')}`,
        );
      }
      const ungranted = ungrantedTaskResources(definition);
      if (ungranted.length > 0) {
        throw new Error(
          `${path} has Task states whose integration the workflow role is not granted (${ungranted.join('; ')}); ` +
            'add the permission in cdk/lib/workflows.ts together with its test',
        );
      }
      const name = stateMachinePhysicalName(props.prefix, machine.name);

      const role = new Role(this, `${machine.id}Role`, {
        assumedBy: new ServicePrincipal('states.amazonaws.com'),
        description: `Runs the ${name} workflow`,
      });
      const invoked = WORKFLOW_FUNCTIONS.filter((fn) => used.includes(functionArnVariable(fn.id)));
      if (invoked.length > 0) {
        role.addToPolicy(
          new PolicyStatement({
            sid: 'InvokeOwnFunctionsOnly',
            actions: ['lambda:InvokeFunction'],
            resources: invoked.map((fn) => props.functions[fn.id].functionArn),
          }),
        );
      }
      // The batch starts an execution per item; the guarded write starts its own inverse as a nested execution (Compensate path).
      if (used.includes(stateMachineArnVariable('GuardedWrite'))) {
        role.addToPolicy(
          new PolicyStatement({ sid: 'StartGuardedWrites', actions: ['states:StartExecution'], resources: [childArns.stateMachine] }),
        );
        role.addToPolicy(
          new PolicyStatement({
            sid: 'WatchGuardedWrites',
            actions: ['states:DescribeExecution', 'states:StopExecution'],
            resources: [childArns.executions],
          }),
        );
        role.addToPolicy(
          new PolicyStatement({
            sid: 'SyncCompletionRule',
            actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
            resources: [stack.formatArn({ service: 'events', resource: 'rule', resourceName: SYNC_EVENTS_RULE })],
          }),
        );
      }

      if (hasDistributedMap(definition)) {
        // A map run starts its items as child executions of this state machine and watches them (documented least privilege).
        const own = stack.formatArn({
          service: 'states',
          resource: 'stateMachine',
          resourceName: name,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        });
        role.addToPolicy(new PolicyStatement({ sid: 'StartOwnMapRunChildren', actions: ['states:StartExecution'], resources: [own] }));
        role.addToPolicy(
          new PolicyStatement({
            sid: 'WatchOwnMapRunChildren',
            actions: ['states:DescribeExecution', 'states:StopExecution'],
            resources: [
              stack.formatArn({
                service: 'states',
                resource: 'execution',
                resourceName: `${name}/*`,
                arnFormat: ArnFormat.COLON_RESOURCE_NAME,
              }),
            ],
          }),
        );
        props.working.grantMapRun(role);
      }

      const logGroup = new LogGroup(this, `${machine.id}Logs`, {
        // The vendedlogs prefix keeps CloudWatch Logs' resource policy from growing per log group.
        logGroupName: `/aws/vendedlogs/states/${name}`,
        retention: props.logRetention,
        // A fixed name: deleted with the stack so a redeploy can create it again (see docs/deploy.md, Teardown and redeploy).
        removalPolicy: RemovalPolicy.DESTROY,
      });

      const values = Object.fromEntries(used.map((variable) => [variable, available[variable] as string]));
      byId[machine.id] = new StateMachine(this, machine.id, {
        stateMachineName: name,
        stateMachineType: StateMachineType.STANDARD,
        definitionBody: DefinitionBody.fromString(definition),
        definitionSubstitutions: values,
        role,
        tracingEnabled: true,
        // Execution data would put task tokens and vendor page content into the logs.
        logs: { destination: logGroup, level: LogLevel.ALL, includeExecutionData: false },
      });
      logGroups[machine.id] = logGroup;
      substitutions[machine.id] = values;
      roles[machine.id] = role;
      names[machine.id] = name;
    }
    // The batch starts guarded-write executions by ARN; make sure that workflow exists first.
    byId.Batch.node.addDependency(byId.GuardedWrite);
    this.byId = byId;
    this.logGroups = logGroups;
    this.substitutions = substitutions;
    this.roles = roles;
    this.names = names;
  }
}
