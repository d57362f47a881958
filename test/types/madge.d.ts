// The part of madge's API (it ships no types) that test/architecture.test.ts uses.
declare module 'madge' {
  export interface MadgeConfig {
    baseDir?: string;
    fileExtensions?: string[];
    tsConfig?: string | object;
    excludeRegExp?: Array<RegExp | string>;
    detectiveOptions?: Record<string, unknown>;
  }
  export interface MadgeInstance {
    /** Every file with the files it imports, as paths relative to `baseDir`. */
    obj(): Record<string, string[]>;
    /** Every import cycle, as the list of files around it. */
    circular(): string[][];
    /** Files skipped because an import could not be resolved. */
    warnings(): { skipped: string[] };
  }
  function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeInstance>;
  export default madge;
}
