module polydbg.test/conformance

go 1.19
