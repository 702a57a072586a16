module polyflake.example/polyglot

go 1.21
