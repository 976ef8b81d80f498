module secrets

go 1.21
