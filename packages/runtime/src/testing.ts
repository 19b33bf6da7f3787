export { describeStoreContract, type StoreContractFixture } from "./store/store-contract.js";
