import type { CommandModule } from 'yargs';

/**
 * A command module whose handler's argv is the type its builder's options infer
 * (`y.options(TABLE)`), so no command restates its flags in an interface or casts
 * yargs' types away; TypeScript reads U off the builder's return type.
 */
export function defineCommand<U>(module: CommandModule<object, U>): CommandModule<object, U> {
  return module;
}
