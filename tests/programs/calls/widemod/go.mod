module polydbg.test/widemod

go 1.19
