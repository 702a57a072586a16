module polyflake.example/cgotest

go 1.21

require (
	example.invalid/polyflake/go v0.0.0
	github.com/bwmarrin/snowflake v0.3.0
)

// The Go module of this repository (go/), as a user's module would require it.
replace example.invalid/polyflake/go => ../../go
