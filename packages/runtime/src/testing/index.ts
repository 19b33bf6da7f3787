/**
 * `@toolpact/runtime/testing`: what tests of stores and hosts use. Never imported by production code.
 */
export { describeStoreContract, type StoreContractFixture } from "./store-contract.js";
export { createTcpProxy, type TcpProxy, type TcpProxyOptions, type TcpProxyState } from "./tcp-proxy.js";
export { postgresTestGate, type PostgresTestGate } from "./postgres-test-gate.js";
