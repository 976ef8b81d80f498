module polydbg.bench/native

go 1.19
