module polydbg.test/hits

go 1.19
