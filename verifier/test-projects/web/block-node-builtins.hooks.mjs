import { builtinModules } from 'node:module';

const builtins = new Set(builtinModules);

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith('node:') || builtins.has(specifier)) {
    throw new Error(`blocked Node built-in "${specifier}" imported from ${context.parentURL}`);
  }
  return nextResolve(specifier, context);
}
