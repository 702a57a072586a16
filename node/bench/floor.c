/*
 * The Node-API floor of a bigint-returning call, measured alone (node/bench/bench.js, not part of
 * the addon): two Node-API functions that issue nothing and hand back a constant ID the two ways
 * the binding can, each reading its data pointer as the binding's bound functions do
 * (node/src/fast.rs, `call`):
 *
 *   bigint()  returns the constant as a Node-API bigint (napi_create_bigint_uint64): how
 *             node/src/fast.rs returned IDs before the slot;
 *   slot()    writes the constant into the one-element BigInt64Array `slotArray` and returns
 *             undefined, for a JS function to read `slotArray[0]` (what node/src/fast.rs does
 *             now); timed alone, it is the cost of the call itself.
 *
 * Built by .build/mk/node.mk (`make bench-node`, `make bench-check-node`) with the C compiler and Node's
 * own headers into $(CARGO_TARGET_DIR)/node-bench/floor.node.
 */
#include <node_api.h>
#include <stdint.h>

#define ID 0x2000000000001234ULL /* an ID of 62 bits, as the core's */

static napi_value bigint(napi_env env, napi_callback_info info) {
  void *data = NULL;
  napi_value out = NULL;
  if (napi_get_cb_info(env, info, NULL, NULL, NULL, &data) != napi_ok) return NULL;
  napi_create_bigint_uint64(env, ID + (uintptr_t)data, &out);
  return out;
}

static napi_value slot(napi_env env, napi_callback_info info) {
  void *data = NULL;
  if (napi_get_cb_info(env, info, NULL, NULL, NULL, &data) != napi_ok) return NULL;
  *(uint64_t *)data = ID;
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value f, buffer, array;
  void *memory = NULL;
  if (napi_create_arraybuffer(env, 8, &memory, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_bigint64_array, 1, buffer, 0, &array) != napi_ok ||
      napi_set_named_property(env, exports, "slotArray", array) != napi_ok)
    return NULL;
  if (napi_create_function(env, "bigint", NAPI_AUTO_LENGTH, bigint, NULL, &f) != napi_ok ||
      napi_set_named_property(env, exports, "bigint", f) != napi_ok)
    return NULL;
  if (napi_create_function(env, "slot", NAPI_AUTO_LENGTH, slot, memory, &f) != napi_ok ||
      napi_set_named_property(env, exports, "slot", f) != napi_ok)
    return NULL;
  return exports;
}
