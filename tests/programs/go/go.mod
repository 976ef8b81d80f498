module polydbg.test/goprog

go 1.19
