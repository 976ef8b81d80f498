module polydbg.test/gotests

go 1.19
