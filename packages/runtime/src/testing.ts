export { describeStoreContract, type StoreContractFixture } from "./store/store-contract.js";
export { createTcpProxy, type TcpProxy, type TcpProxyOptions, type TcpProxyState } from "./store/tcp-proxy.js";
export { postgresTestGate, type PostgresTestGate } from "./store/postgres-test-gate.js";
