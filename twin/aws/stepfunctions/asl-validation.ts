import { createRequire } from 'node:module';
import { StateMachine, type StateMachineDefinition } from './library.js';

type AjvInstance = {
  addKeyword(definition: unknown, ...rest: unknown[]): AjvInstance;
  getKeyword(name: string): unknown;
};
type AjvConstructor = new (options?: { schemas?: Array<{ $id?: unknown }> }) => AjvInstance;

const requireHere = createRequire(import.meta.url);

/** The `ajv` module asl-validator (used by aws-local-stepfunctions) loads. */
function validatorAjvModule(): { default: AjvConstructor } | undefined {
  try {
    const fromLibrary = createRequire(requireHere.resolve('aws-local-stepfunctions'));
    const fromValidator = createRequire(fromLibrary.resolve('asl-validator'));
    const mod = fromValidator('ajv') as { default?: unknown };
    return typeof mod.default === 'function' ? (mod as { default: AjvConstructor }) : undefined;
  } catch {
    return undefined;
  }
}

const ajvModule = validatorAjvModule();
let sharedAjv: AjvInstance | undefined;

function isAslValidatorSchemaSet(options: { schemas?: Array<{ $id?: unknown }> } | undefined): boolean {
  const schemas = options?.schemas;
  return (
    Array.isArray(schemas) &&
    schemas.length > 0 &&
    schemas.every((s) => typeof s?.$id === 'string' && s.$id.startsWith('http://asl-validator.cloud/'))
  );
}

/**
 * asl-validator builds a new Ajv and recompiles its whole ASL schema on every
 * call: 0.6-2 s per CreateStateMachine on a small machine. While our call
 * runs, its Ajv constructor hands back one shared instance (schemas compiled
 * once, the same options every time), so later validations take milliseconds.
 * The swap lasts only for this synchronous call; if ajv's shape ever changes,
 * validation still works, just slowly.
 */
export function validateAsl(definition: StateMachineDefinition): void {
  const original = ajvModule?.default;
  if (!ajvModule || !original) {
    new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } });
    return;
  }
  // biome-ignore lint/complexity/useArrowFunction: the validator calls it with `new`, and an arrow function is not a constructor
  const caching = function (options?: { schemas?: Array<{ $id?: unknown }> }) {
    if (!isAslValidatorSchemaSet(options)) return new original(options);
    if (!sharedAjv) {
      const instance = new original(options);
      const addKeyword = instance.addKeyword.bind(instance);
      // ajv-formats adds its keywords on every call; on the shared instance the second time is a no-op.
      instance.addKeyword = (def: unknown, ...rest: unknown[]) => {
        const names = ([] as unknown[]).concat(typeof def === 'string' ? def : (def as { keyword?: unknown })?.keyword);
        if (names.length > 0 && names.every((n) => typeof n === 'string' && instance.getKeyword(n))) return instance;
        return addKeyword(def, ...rest);
      };
      sharedAjv = instance;
    }
    return sharedAjv;
  } as unknown as AjvConstructor;
  ajvModule.default = caching;
  try {
    new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } });
  } finally {
    ajvModule.default = original;
  }
}
