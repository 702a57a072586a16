module polyflake.example/cgotest

go 1.21

require github.com/bwmarrin/snowflake v0.3.0
