import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant, type QuickJSWASMModule } from 'quickjs-emscripten';

/**
 * QuickJS's release build (quickjs-emscripten's RELEASE_SYNC variant), loaded with require instead
 * of the variant's dynamic import(), so it loads the same way under Node, tsx and Jest's module
 * sandbox. Each call is a new WebAssembly instance with a memory of its own.
 */
const RELEASE_SYNC_REQUIRED: QuickJSSyncVariant = {
  type: 'sync',
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  importFFI: async () => (require('@jitl/quickjs-wasmfile-release-sync/ffi') as { QuickJSFFI: never }).QuickJSFFI,
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  importModuleLoader: async () => require('@jitl/quickjs-wasmfile-release-sync/emscripten-module') as never,
};

export function newQuickJSModule(): Promise<QuickJSWASMModule> {
  return newQuickJSWASMModuleFromVariant(RELEASE_SYNC_REQUIRED);
}
