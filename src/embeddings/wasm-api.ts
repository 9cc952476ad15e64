// The parts of the WebAssembly API used by the kernels here (the project's `lib` has no DOM types).
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export type WasmModule = object;
export interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}
export const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

export const WASM_PAGE = 65536;

/** A kernel's module compiled from base64, or null where WebAssembly (or its SIMD, when used) is not available. */
export function compileKernel(base64: string): WasmModule | null {
  try {
    const bytes = Buffer.from(base64, 'base64');
    return wasm && wasm.validate(bytes) ? new wasm.Module(bytes) : null;
  } catch {
    return null;
  }
}
