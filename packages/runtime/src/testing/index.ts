/**
 * `@toolpact/runtime/testing`: what tests of stores and hosts use. Never imported by production code.
 */
export { describeStoreContract, type StoreContractFixture } from "./store-contract.js";
export { createTcpProxy, type TcpProxy, type TcpProxyOptions, type TcpProxyState } from "./tcp-proxy.js";
export { postgresTestGate, type PostgresTestGate } from "./postgres-test-gate.js";
export {
  createTestHost,
  TEST_CALLER_ID,
  TEST_TENANT_ID,
  TEST_ACTOR_ISSUER,
  type TestHost,
  type TestHostOptions,
  type TestPlugin,
  type TestActor,
  type TestCallerOptions,
} from "./test-host.js";
