// Types of idna-tables.mjs, for the test that regenerates src/schema/idna/tables.ts.
/** The npm package the tables are computed from. */
export declare const UNICODE_PACKAGE: string;
/** The source of src/schema/idna/tables.ts. */
export declare function idnaTablesSource(): Promise<string>;
