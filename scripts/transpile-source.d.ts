/** Every .ts file of src/ (declarations and the portal's browser code aside) as JavaScript into `outdir`; answers `outdir`. */
export declare function transpileSource(outdir: string): Promise<string>;
