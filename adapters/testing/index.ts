// flowctl/testing: conformance suites for third-party adapters.
export {};
