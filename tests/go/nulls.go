// Package cgotest tests polyflake from Go: the module at go/ (package polyflake) against the
// shared vectors and scenario files, leases and a benchmark beside bwmarrin/snowflake; and, in
// this file, the C ABI's NULL checks, which the Go package never exercises (it passes no NULL).
// (cgo cannot be used in _test.go files, so the calls live here and the tests beside them.)
package cgotest

/*
#cgo pkg-config: polyflake
#include "polyflake.h"
*/
import "C"

// NullChecks calls pointer-taking functions with a NULL in each pointer position and returns the
// result names, keyed by a description.
func NullChecks() map[string]string {
	out := map[string]string{}
	name := func(r C.polyflake_result) string { return C.GoString(C.polyflake_result_name(C.uint32_t(r))) }
	var c C.polyflake_config
	C.polyflake_config_init(&c)
	var tc C.polyflake_timeid_config
	C.polyflake_timeid_config_init(&tc)
	var id C.uint64_t
	var bytes [16]C.uint8_t
	var g *C.polyflake_generator
	var u *C.polyflake_uuid7_generator
	var l *C.polyflake_ulid_generator
	out["config_init(NULL)"] = name(C.polyflake_config_init(nil))
	out["generator_new(NULL, NULL, &g)"] = name(C.polyflake_generator_new(nil, nil, &g))
	out["generator_new(&c, NULL, NULL)"] = name(C.polyflake_generator_new(&c, nil, nil))
	out["generator_close(NULL)"] = name(C.polyflake_generator_close(nil))
	out["wait_ready(NULL, 0)"] = name(C.polyflake_wait_ready(nil, 0))
	out["manual_clock_elapse(NULL, 1)"] = name(C.polyflake_manual_clock_elapse(nil, 1))
	out["manual_clock_set_tick_ms(NULL, 4)"] = name(C.polyflake_manual_clock_set_tick_ms(nil, 4))
	out["next_id(NULL, &id)"] = name(C.polyflake_next_id(nil, &id))
	out["next_ids(NULL, &id, 1)"] = name(C.polyflake_next_ids(nil, &id, 1))
	out["parse_id(NULL, &id)"] = name(C.polyflake_parse_id(nil, &id))
	out["manual_clock_new(0, NULL)"] = name(C.polyflake_manual_clock_new(0, nil))
	out["health(NULL, NULL)"] = name(C.polyflake_health(nil, nil))
	var fo C.polyflake_file_lease_options
	C.polyflake_file_lease_options_init(&fo)
	out["new_file_lease(&c, &o{dir: NULL}, NULL, &g)"] = name(C.polyflake_generator_new_file_lease(&c, &fo, nil, &g))
	out["new_file_lease(&c, NULL, NULL, &g)"] = name(C.polyflake_generator_new_file_lease(&c, nil, nil, &g))
	var eo C.polyflake_etcd_options
	C.polyflake_etcd_options_init(&eo)
	eo.endpoint_count = 1
	out["new_etcd(&c, &o{endpoints: NULL, count: 1}, NULL, &g)"] = name(C.polyflake_generator_new_etcd(&c, &eo, nil, &g))
	out["new_from_env(&c, NULL, NULL, &g)"] = name(C.polyflake_generator_new_from_env(&c, nil, nil, &g))
	out["timeid_config_init(NULL)"] = name(C.polyflake_timeid_config_init(nil))
	out["uuid7_generator_new(NULL, NULL, &u)"] = name(C.polyflake_uuid7_generator_new(nil, nil, &u))
	out["ulid_generator_new(&tc, NULL, NULL)"] = name(C.polyflake_ulid_generator_new(&tc, nil, nil))
	out["next_uuid7(NULL, bytes)"] = name(C.polyflake_next_uuid7(nil, &bytes[0]))
	out["next_ulids(NULL, bytes, 1)"] = name(C.polyflake_next_ulids(nil, &bytes[0], 1))
	out["next_id_within(NULL, &id, 10)"] = name(C.polyflake_next_id_within(nil, &id, 10))
	out["next_ids_within(NULL, &id, 1, 10)"] = name(C.polyflake_next_ids_within(nil, &id, 1, 10))
	out["next_uuid7_within(NULL, bytes, 10)"] = name(C.polyflake_next_uuid7_within(nil, &bytes[0], 10))
	out["next_ulids_within(NULL, bytes, 1, 10)"] = name(C.polyflake_next_ulids_within(nil, &bytes[0], 1, 10))
	out["generator_interrupt(NULL)"] = name(C.polyflake_generator_interrupt(nil))
	out["uuid7_generator_interrupt(NULL)"] = name(C.polyflake_uuid7_generator_interrupt(nil))
	out["ulid_generator_interrupt(NULL)"] = name(C.polyflake_ulid_generator_interrupt(nil))
	out["parse_uuid(NULL, bytes)"] = name(C.polyflake_parse_uuid(nil, &bytes[0]))
	out["format_ulid(NULL, buf, 27)"] = name(C.polyflake_format_ulid(nil, nil, 27))
	out["uuid7_timestamp_ms(bytes, NULL)"] = name(C.polyflake_uuid7_timestamp_ms(&bytes[0], nil))
	if g != nil || u != nil || l != nil {
		out["out-param written on error"] = "WRITTEN"
	}
	return out
}
