module example.invalid/polyflake/go

go 1.21
