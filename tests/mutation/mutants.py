"""The mutants that tests/mutation/run.py plants in the headers, one at a time: each a small, realistic edit
of cpp/include/dltensor/<file> (a flipped comparison, a dropped check, a swapped flag, a wrong constant, a
skipped reference count or GIL, a wrong policy branch), and the tests that must catch it.

`old` must occur exactly once in its header (tests/test_mutation.py checks every one against the
checkout). `tests` are pytest node selections relative to the repository root; they run on both backends
and both import paths, as in the suite. `equivalent`: why no test can tell the mutant from the original;
such a mutant is not run and does not count in the score.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # a header under cpp/include/dltensor/
    old: str
    new: str
    description: str
    tests: tuple
    equivalent: str = ""


IMPORT = "tests/test_import.py"
OWNERSHIP = "tests/test_ownership.py"
TORCH = "tests/test_torch.py"
CONSTRAINTS = "tests/test_constraints.py"
CONVERSION = "tests/test_conversion.py"
BAD_INPUT = "tests/test_bad_input.py"
EXPORT = "tests/test_export.py"
IDENTITY = "tests/test_identity.py"
PRODUCERS = "tests/test_producers.py"
THREADS = "tests/test_threads.py"
LIFECYCLE = "tests/test_lifecycle.py"
PORTING = "tests/test_porting.py"
EXPLAIN = "tests/test_explain.py"
KEY_SET = "tests/test_torch_key_set.py"
NDARRAY_COMPAT = "tests/test_ndarray_compat.py"


def t(file, *functions):
    """Node selections: `file::function` for each function, or the whole file."""
    return tuple(f"{file}::{f}" for f in functions) or (file,)


MUTANTS = [
    # ---- consume-once and deleters (capsule_import.h, import.h) ----------------------------------------------
    Mutant("consume_keeps_the_name", "capsule_import.h",
           "    if (PyCapsule_SetDestructor(capsule, nullptr) != 0 ||\n"
           "        PyCapsule_SetName(capsule, versioned ? dlpack::used_capsule_name_versioned\n"
           "                                             : dlpack::used_capsule_name) != 0) {",
           "    if (PyCapsule_SetDestructor(capsule, nullptr) != 0) {",
           "an accepted capsule is not renamed used_dltensor: a second call imports it again",
           t(IMPORT, "test_raw_capsule_is_consumed_exactly_once")),
    Mutant("used_names_swapped", "capsule_import.h",
           "versioned ? dlpack::used_capsule_name_versioned\n"
           "                                             : dlpack::used_capsule_name) != 0",
           "versioned ? dlpack::used_capsule_name\n"
           "                                             : dlpack::used_capsule_name_versioned) != 0",
           "a consumed capsule gets the other layout's used name",
           t(IMPORT, "test_raw_capsule_is_consumed_exactly_once")),
    Mutant("adopt_a_shared_capsule", "capsule_import.h",
           "if (adopt && Py_REFCNT(capsule) == 1 && PyCapsule_GetDestructor(capsule)) {",
           "if (adopt && PyCapsule_GetDestructor(capsule)) {",
           "a __dlpack__ capsule that its producer still holds becomes the owner without being consumed",
           t(IMPORT, "test_raw_capsule_is_consumed_exactly_once", "test_capsule_its_producer_still_holds_is_consumed")),
    Mutant("owner_skips_the_deleter", "capsule_import.h",
           "owner_name));\n    if (mt && mt->deleter) mt->deleter(mt);",
           "owner_name));\n    if (mt && !mt->deleter) mt->deleter(mt);",
           "the owner of an unversioned tensor tests the deleter the wrong way round and never calls it",
           t(IMPORT, "test_raw_capsule_is_consumed_exactly_once")),
    Mutant("rejected_capsule_not_released", "import.h",
           "m = import_capsule(capsule.get(), r, info.immutable, true, out);",
           "m = import_capsule(capsule.release(), r, info.immutable, true, out);",
           "the capsule from __dlpack__ is never released (its reference leaks): its producer never frees it",
           t(BAD_INPUT, "test_malformed_capsule_is_rejected_and_not_consumed")),
    Mutant("numpy_owner_not_increfed", "import.h",
           "    out.tensor = t;\n    out.owner = py_ref::borrow(src);",
           "    out.tensor = t;\n    out.owner = py_ref(src);",
           "the NumPy fast path makes the array its owner without a reference of its own (a steal, not a borrow)",
           t(OWNERSHIP, "test_kept_tensor_keeps_the_producer_alive") + t(IMPORT, "test_numpy_array_is_read_in_place")),
    Mutant("owner_does_not_hold_the_source", "import.h",
           "        out.owner = std::move(pair);",
           "        (void) pair;",
           "a producer's capsule is the owner alone: the source object that a return hands back may die",
           t(IDENTITY, "test_member_reads_back_as_the_stored_object", "test_stored_source_outlives_the_callers_reference")),

    Mutant("managed_tensor_freed_twice", "capsule_import.h",
           "        if (capsule) mt_ = nullptr;\n",
           "",
           "a managed tensor handed to its owner capsule is still deleted by the guard: freed twice",
           t(TORCH, "test_framework_allocated_output", "test_framework_allocated_output_has_no_owner_capsule")),
    Mutant("buffer_owner_freed_twice", "buffer_import.h",
           "        b_ = nullptr;\n        return capsule;",
           "        return capsule;",
           "a buffer export handed to its owner capsule is still released by the guard: freed twice",
           t(IMPORT, "test_buffer_protocol_objects_are_accepted", "test_buffer_protocol_dtypes_and_read_only")),
    Mutant("bfloat16_numpy_reader_skipped", "import.h",
           "if (m == mismatch::invalid && info.kind == producer::numpy) m = import_numpy(src, r, out, false);",
           "if (m == mismatch::invalid && info.kind == producer::numpy && false) m = import_numpy(src, r, out, false);",
           "ml_dtypes bfloat16 arrays (no public route) are not read from NumPy's structures",
           t(PRODUCERS, "test_bfloat16_parameters_read_every_producer", "test_bfloat16_numpy_writes_reach_the_array")),

    # ---- the type cache (producer.h) ----------------------------------------------------------------------
    Mutant("type_cache_holds_no_reference", "producer.h",
           "        Py_INCREF((PyObject *) tp);\n        slot = entry{tp, info};\n    }\n    Py_XDECREF(evicted);",
           "        slot = entry{tp, info};\n    }\n    (void) evicted;",
           "the per-type cache keeps borrowed type pointers: a freed type's address may be reused",
           t(IMPORT, "test_type_cache_never_confuses_a_freed_type_with_a_new_one",
             "test_more_producer_types_than_the_cache_holds")),
    Mutant("type_cache_one_slot", "producer.h",
           "last = next++ % capacity;",
           "last = next % capacity;",
           "every new type goes into slot 0 of the cache",
           t(IMPORT, "test_more_producer_types_than_the_cache_holds"),
           equivalent="the cache only saves a lookup: a type not found is classified again, with the same "
                      "result, and slot 0 still holds its type by a strong reference (only speed changes)"),

    # ---- read-only rules and immutability ---------------------------------------------------------------
    Mutant("jax_is_not_immutable", "producer.h",
           "info.immutable = info.kind == producer::jax || info.kind == producer::tensorflow;",
           "info.immutable = info.kind == producer::tensorflow;",
           "JAX arrays lose their immutability and bind to writable parameters",
           t(CONSTRAINTS, "test_read_only_sources_never_bind_to_writable_parameters",
             "test_writable_overload_is_chosen_only_for_writable_sources")),
    Mutant("read_only_flag_misread", "capsule_import.h",
           "read_only |= (mt->flags & dlpack::flag_read_only) != 0;",
           "read_only |= (mt->flags & dlpack::flag_is_copied) != 0;",
           "the DLPack flags are read with the wrong bit (is-copied instead of read-only)",
           t(CONSTRAINTS, "test_read_only_sources_never_bind_to_writable_parameters")
           + t(BAD_INPUT, "test_unknown_flags_do_not_matter")),
    Mutant("read_only_buffer_writable", "buffer_import.h",
           "t, v.readonly != 0);",
           "t, false);",
           "a read-only buffer (bytes) binds to a writable parameter",
           t(IMPORT, "test_buffer_protocol_dtypes_and_read_only")),
    Mutant("numpy_writeable_bit_wrong", "frameworks.h",
           "read_only = !(a->flags & writeable);",
           "read_only = !(a->flags & aligned);",
           "the NumPy fast path reads the ALIGNED bit as writability",
           t(CONSTRAINTS, "test_read_only_sources_never_bind_to_writable_parameters")),
    Mutant("exported_buffer_writable", "export.h",
           "view->readonly = h->read_only();",
           "view->readonly = 0;",
           "a const tensor returned to NumPy (buffer protocol) is writable",
           t(EXPORT, "test_const_return_is_read_only")),
    Mutant("exported_capsule_without_read_only_flag", "export.h",
           "e->mt.flags = h->read_only() ? dlpack::flag_read_only : 0;",
           "e->mt.flags = 0;",
           "a const tensor exported as versioned DLPack lacks the read-only flag",
           t(CONSTRAINTS, "test_const_return_is_read_only_for_dlpack_consumers")),
    Mutant("immutable_consumer_refused", "export.h",
           "if (!versioned && h->read_only() && !reinterpret_cast<exported_object *>(self)->immutable_consumer) {",
           "if (!versioned && h->read_only()) {",
           "a const tensor cannot be handed to JAX, which asks for unversioned DLPack",
           t(PRODUCERS, "test_const_jax_float64_return")),

    # ---- PyTorch (torch.h, import.h) --------------------------------------------------------------------
    Mutant("negative_bit_ignored", "torch.h",
           "if (neg || conj) return mismatch::lazy;",
           "if (conj) return mismatch::lazy;",
           "PyTorch negative views are read as if their memory held the values",
           t(TORCH, "test_negative_view_is_read_with_its_sign")),
    Mutant("conjugate_bit_checked_for_floats", "import.h",
           "torch_precheck(src, info.torch, r, t.dtype.code == dlpack::complex_, nullptr, &t);",
           "torch_precheck(src, info.torch, r, t.dtype.code == dlpack::float_, nullptr, &t);",
           "the exchange path asks for the conjugate bit of float tensors instead of complex ones",
           t(TORCH, "test_conjugate_view_is_materialized_for_read_only_parameters",
             "test_conjugate_view_is_refused_by_writable_parameters")),
    Mutant("requires_grad_ignored", "torch.h",
           "const bool grad = c.needs_grad(src);",
           "const bool grad = false;",
           "a tensor that requires grad binds to writable parameters while grad mode is on",
           t(TORCH, "test_requires_grad_reads_but_never_writes")
           + t(PRODUCERS, "test_leaf_requiring_grad_is_writable_under_no_grad_only")),
    Mutant("inference_mode_inverted", "torch.h",
           "return torch_process::get().inference_mode() ? mismatch::none : mismatch::inference;",
           "return torch_process::get().inference_mode() ? mismatch::inference : mismatch::none;",
           "inference tensors are writable outside inference_mode and refused inside it",
           t(PRODUCERS, "test_inference_tensor_is_writable_inside_inference_mode_only")),
    Mutant("version_not_bumped", "torch.h",
           "if (!increment_version) return;",
           "if (increment_version) return;",
           "writes from C++ do not bump the autograd version counter",
           t(PRODUCERS, "test_writes_bump_the_autograd_version_counter",
             "test_writes_through_a_view_bump_the_base_version")),
    Mutant("torch_function_trusted", "torch.h",
           "c.overrides_torch_function = tf && tf != torch_process::get().torch_function;",
           "c.overrides_torch_function = false;",
           "a subclass's __torch_function__ answers the neg/conj/requires_grad queries",
           t(PRODUCERS, "test_subclass_whose_torch_function_lies_about_its_state")),

    Mutant("const_empty_left_writable", "allocation.h",
           "imported &out, bool read_only = false) noexcept {",
           "imported &out, bool = false) noexcept {\n    const bool read_only = false;",
           "a const py::numpy tensor from empty() / copy_of() comes back as a writable NumPy array",
           t(PORTING, "test_const_results_filled_by_cpp_are_read_only_numpy_arrays")),

    # ---- PyTorch's key set (torch_key_set.h, torch.h) ---------------------------------------------------
    Mutant("key_set_guard_skipped", "torch_key_set.h",
           "if (!impl || reinterpret_cast<const char *>(view.shape) != impl + shape_in_impl) return false;",
           "if (!impl) return false;",
           "the key set is read through whatever the object points to, without checking that the view's "
           "shape lies in that TensorImpl (a view of another tensor, sizes on the heap)",
           t(KEY_SET, "test_key_set_read_agrees_with_is_neg_and_is_conj",
             "test_guard_refuses_a_view_of_another_tensor")),
    Mutant("key_set_guard_offset_off", "torch_key_set.h",
           "reinterpret_cast<const char *>(view.shape) != impl + shape_in_impl) return false;",
           "reinterpret_cast<const char *>(view.shape) != impl + shape_in_impl + 8) return false;",
           "the guard compares the shape with the wrong place in the TensorImpl: no read passes it",
           t(KEY_SET, "test_layout_is_calibrated_against_pytorch", "test_read_follows_in_place_flips_between_calls")),
    Mutant("key_set_negative_bit_swapped", "torch_key_set.h",
           "neg = (keys & negative) != 0;",
           "neg = (keys & conjugate) != 0;",
           "the negative bit is read from the conjugate bit's position",
           t(KEY_SET, "test_layout_is_calibrated_against_pytorch", "test_key_set_read_agrees_with_is_neg_and_is_conj")
           + t(TORCH, "test_negative_view_is_read_with_its_sign")),
    Mutant("key_set_switch_ignored", "torch.h",
           "if (view && torch_key_set_enabled().load(std::memory_order_relaxed) &&",
           "if (view &&",
           "DLTENSOR_TORCH_KEY_SET=0 and torch_key_set_enabled() = false do not turn the read off",
           t(KEY_SET, "test_switch_is_per_process_and_reported", "test_environment_variable_turns_the_read_off")),

    # ---- strides, order, size-1 dimensions (strides.h) --------------------------------------------------
    Mutant("c_order_skips_dimension_0", "strides.h",
           "for (int32_t i = t.ndim - 1; i >= 0; --i) {",
           "for (int32_t i = t.ndim - 1; i > 0; --i) {",
           "the C-order check ignores dimension 0: 1-D strided tensors count as C-contiguous",
           t(CONSTRAINTS, "test_c_contig_refuses_strided_dimension_zero", "test_c_and_f_order")),
    Mutant("f_order_skips_the_last_dimension", "strides.h",
           "        for (int32_t i = 0; i < t.ndim; ++i) {\n            if (t.shape[i] == 1) continue;\n"
           "            if (t.strides[i] != expect) { f = false; break; }",
           "        for (int32_t i = 0; i < t.ndim - 1; ++i) {\n            if (t.shape[i] == 1) continue;\n"
           "            if (t.strides[i] != expect) { f = false; break; }",
           "the F-order check ignores the last dimension: column-strided tensors count as F-contiguous",
           t(CONSTRAINTS, "test_c_and_f_order", "test_f_contig_refuses_a_strided_last_dimension")
           + t(CONVERSION, "test_order_conversion_for_read_only_parameters")),
    Mutant("size_one_dimensions_constrain", "strides.h",
           "            if (t.shape[i] == 1) continue;\n            if (t.strides[i] != expect) { c = false; break; }",
           "            if (t.strides[i] != expect) { c = false; break; }",
           "the C-order check demands the nominal stride of size-1 dimensions",
           t(CONSTRAINTS, "test_size_one_and_zero_size_dimensions_place_no_constraint_on_strides")),
    Mutant("one_element_not_special", "strides.h",
           "if (element_count(t) <= 1) return true;",
           "if (element_count(t) == 0) return true;",
           "only empty tensors skip the stride check",
           t(CONSTRAINTS, "test_size_one_and_zero_size_dimensions_place_no_constraint_on_strides"),
           equivalent="a tensor of one element has only extents of 1, which both stride loops skip (and with "
                      "NULL strides C holds and F counts no extent above 1): the answer is the same"),
    Mutant("positive_view_drops_byte_offset", "strides.h",
           "out.data = (char *) t.data + t.byte_offset + first",
           "out.data = (char *) t.data + first",
           "the positive-stride view of a negative-stride return forgets the byte_offset",
           t(LIFECYCLE, "test_negative_stride_pytorch_returns_do_not_abort")),

    # ---- requirements and validation (requirements.h, dtypes.h, dlpack.h) -------------------------------
    Mutant("writable_parameter_converts", "requirements.h",
           "if (!r.read_only || (m != mismatch::dtype",
           "if ((m != mismatch::dtype",
           "writable parameters receive converted copies (writes would be lost)",
           t(CONVERSION, "test_writable_parameter_never_receives_a_copy") + t(CONSTRAINTS, "test_c_and_f_order")),
    Mutant("alignment_ignores_byte_offset", "requirements.h",
           "((uintptr_t) t.data + t.byte_offset) % r.alignment != 0",
           "((uintptr_t) t.data) % r.alignment != 0",
           "the alignment check looks at the data pointer without the byte_offset",
           t(IMPORT, "test_byte_offset_counts_for_alignment")),
    Mutant("ndim_limit_off_by_one", "requirements.h",
           "if (t.ndim < 0 || t.ndim > dlpack::max_ndim) return \"ndim out of range\";",
           "if (t.ndim < 0 || t.ndim >= dlpack::max_ndim) return \"ndim out of range\";",
           "tensors of exactly max_ndim (64) dimensions are refused",
           t(IMPORT, "test_64_dimensions_are_accepted")),
    Mutant("lanes_unchecked", "dtypes.h",
           "    if (t.lanes != 1) return false;\n",
           "",
           "vector dtypes (lanes != 1) pass validation",
           t(BAD_INPUT, "test_malformed_capsule_is_rejected_and_not_consumed")),
    Mutant("dtype_equality_ignores_bits", "dlpack.h",
           "return code == o.code && bits == o.bits && lanes == o.lanes;",
           "return code == o.code && lanes == o.lanes;",
           "float64 satisfies a float32 parameter",
           t(CONSTRAINTS, "test_wrong_dtype_is_rejected", "test_overloads_by_dtype_and_shape")),
    Mutant("alignment_not_required", "requirements.h",
           "r.alignment = (uint8_t) alignof(Scalar);",
           "r.alignment = 1;",
           "typed parameters (both backends: one requirements builder) accept misaligned pointers",
           t(PRODUCERS, "test_typed_pointers_are_aligned")),

    # ---- byte order -------------------------------------------------------------------------------------
    Mutant("buffer_byte_order_swapped", "buffer_import.h",
           "native = (*fmt == '<') == little || itemsize == 1;",
           "native = (*fmt == '>') == little || itemsize == 1;",
           "buffer formats with an explicit byte order are read the wrong way round",
           t(BAD_INPUT, "test_big_endian_buffer_is_rejected_or_converted")),
    # ---- byte_offset and strides on both backends -------------------------------------------------------
    Mutant("nanobind_import_drops_byte_offset", "nanobind.h",
           "'C', t.byte_offset);\n        value.m_stream = im.stream;",
           "'C', 0);\n        value.m_stream = im.stream;",
           "the nanobind caster builds its tensor without the byte_offset",
           t(IMPORT, "test_byte_offset_is_applied", "test_negative_strides")),
    Mutant("buffer_export_drops_byte_offset", "export.h",
           "view->buf = (char *) t.data + t.byte_offset;",
           "view->buf = (char *) t.data;",
           "returns to NumPy (buffer protocol) ignore the byte_offset",
           t(EXPORT, "test_strides_and_byte_offset_on_export")),
    Mutant("handle_f_order_ignored", "handle.h",
           "} else if (order == 'F') {",
           "} else if (order == 'A') {",
           "a pybind11 tensor annotated f_contig without strides gets C strides",
           t(EXPORT, "test_strides_and_byte_offset_on_export")),

    # ---- exchange API (exchange.h) ----------------------------------------------------------------------
    Mutant("exchange_major_version_ignored", "exchange.h",
           "        if (h->version.major != dlpack::major_version) continue;\n",
           "",
           "an exchange API table of another major version is used",
           t(TORCH, "test_exchange_api_of_another_major_version_alone_is_not_used")),
    Mutant("exchange_allocator_optional", "exchange.h",
           "if (api->managed_tensor_allocator && api->managed_tensor_from_py_object_no_sync &&",
           "if (api->managed_tensor_from_py_object_no_sync &&",
           "an exchange API table without its allocator entry is used",
           t(TORCH, "test_exchange_api_missing_an_entry_is_not_used")),

    # ---- reference counts and the GIL in release paths --------------------------------------------------
    Mutant("handle_never_released", "handle.h",
           "if (refcount_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;",
           "if (refcount_.fetch_sub(1, std::memory_order_acq_rel) != 0) return;",
           "the last reference to a pybind11 tensor handle never releases the owner",
           t(EXPORT, "test_owner_is_released_exactly_once_after_the_last_reference")
           + t(OWNERSHIP, "test_kept_tensor_keeps_the_producer_alive")),
    Mutant("keeper_never_released", "handle.h",
           "        if (keeper_type_) with_gil([&] { keeper_type_->destroy(keeper_); });",
           "",
           "nanobind: the last reference to an exported tensor never drops its nb::ndarray (the owner leaks)",
           t(EXPORT, "test_owner_is_released_exactly_once_after_the_last_reference")),
    Mutant("export_deleter_keeps_the_handle", "export.h",
           "            x->handle->dec_ref();  // takes the GIL if the consumer frees from another thread\n",
           "",
           "the deleter of an exported tensor never drops its handle (the owner leaks)",
           t(EXPORT, "test_owner_is_released_exactly_once_after_the_last_reference")),
    Mutant("release_without_the_gil", "interpreter.h",
           "        PyGILState_STATE st = PyGILState_Ensure();\n        Py_DECREF(o);\n        PyGILState_Release(st);",
           "        Py_DECREF(o);",
           "a reference dropped from a thread without the GIL is released without taking it",
           t(OWNERSHIP, "test_deleter_runs_once_when_cpp_releases_without_the_gil")
           + t(THREADS, "test_tensors_kept_by_cpp_and_released_elsewhere")),

    # ---- identity and return policies (return_policy.h, both backends' mappings, export.h, handle.h) -------
    Mutant("identity_only_unannotated", "return_policy.h",
           "if (valid && has_source && !copy && (annotated == 0 || annotated == source_framework))",
           "if (valid && has_source && !copy && annotated == 0)",
           "a tensor annotated with its source's framework returns a new object, not the source",
           t(IDENTITY, "test_annotation_naming_the_source_framework_returns_the_object")),
    Mutant("identity_only_annotated", "return_policy.h",
           "if (valid && has_source && !copy && (annotated == 0 || annotated == source_framework))",
           "if (valid && has_source && !copy && annotated == source_framework)",
           "an unannotated imported tensor returns a new object, not the source",
           t(IDENTITY, "test_returned_input_is_the_callers_object")),
    Mutant("copy_policy_views", "return_policy.h",
           "const bool copy = policy == return_policy::copy || (policy == return_policy::automatic && !owned);",
           "const bool copy = policy == return_policy::automatic && !owned;",
           "rv_policy::copy / move hand out the source or a view instead of a copy",
           t(IDENTITY, "test_copy_policies_copy_into_the_source_framework",
             "test_copy_policy_copies_cpp_memory_into_every_framework")),
    Mutant("automatic_views_memory_nothing_owns", "return_policy.h",
           "const bool copy = policy == return_policy::copy || (policy == return_policy::automatic && !owned);",
           "const bool copy = policy == return_policy::copy;",
           "the automatic policy views memory without an owner (a local buffer) instead of copying it",
           t(EXPORT, "test_ownerless_return_is_copied_by_the_automatic_policy")),
    Mutant("copy_ignores_the_source_framework", "return_policy.h",
           "const int framework = annotated == 0 && has_source ? source_framework : annotated;",
           "const int framework = annotated;",
           "a copy policy without a framework annotation does not copy into the source's framework",
           t(IDENTITY, "test_copy_policies_copy_into_the_source_framework")),
    Mutant("reference_internal_drops_the_parent", "return_policy.h",
           "return {return_plan::export_, framework, copy, policy == return_policy::view_internal};",
           "return {return_plan::export_, framework, copy, false};",
           "a reference_internal view does not keep its parent alive",
           t(EXPORT, "test_reference_internal_keeps_the_parent_alive")
           + t(IDENTITY, "test_reference_internal_view_with_an_owner_keeps_the_parent_alive")),
    Mutant("parentless_reference_internal_views", "return_policy.h",
           "    if (policy == return_policy::view_internal && !has_parent) policy = return_policy::automatic;\n",
           "",
           "reference_internal without a parent views memory nothing keeps alive",
           t(EXPORT, "test_reference_internal_without_a_parent_copies_memory_nothing_owns")),
    Mutant("move_is_a_view", "return_policy.h",
           "        case Policy::copy:\n        case Policy::move: return return_policy::copy;",
           "        case Policy::copy: return return_policy::copy;",
           "the move policy hands out the source instead of a copy",
           t(IDENTITY, "test_copy_policies_copy_into_the_source_framework")),
    Mutant("nanobind_adopted_ndarray_assumed_ownerless", "nanobind.h",
           "        if (!tensor.m_owner_known && tensor.is_valid() &&",
           "        if (false && tensor.is_valid() &&",
           "nanobind: a tensor adopted from a plain nb::ndarray is treated as ownerless (copied, not shared)",
           t(NDARRAY_COMPAT, "test_converting_constructor_shares_the_tensor")),
    Mutant("none_policy_creates_an_object", "return_policy.h",
           "        if (policy == Policy::none) return return_policy::none;",
           "        if (policy == Policy::none) return return_policy::automatic;",
           "nanobind: rv_policy::none makes an object of a tensor C++ made (nanobind's none creates nothing)",
           t(NDARRAY_COMPAT, "test_none_policy_creates_no_object_for_a_tensor_cpp_made")),
    Mutant("reference_internal_mapped_as_a_plain_view", "return_policy.h",
           "        case Policy::reference_internal: return return_policy::view_internal;",
           "        case Policy::reference_internal: return return_policy::view;",
           "reference_internal is mapped as reference: the parent is not kept alive",
           t(EXPORT, "test_reference_internal_keeps_the_parent_alive")),
    Mutant("pytorch_copy_is_a_view", "export.h",
           "return out && copy ? call_method(out.get(), \"clone\").release() : out.release();",
           "return out.release();",
           "rv_policy::copy returns a py::pytorch view of C++ memory",
           t(IDENTITY, "test_copy_policy_copies_cpp_memory_into_every_framework")),
    Mutant("copy_without_a_framework", "export.h",
           "            if (copy) {\n"
           "                PyErr_SetString(PyExc_RuntimeError, no_framework_to_copy_into);\n"
           "                return nullptr;\n"
           "            }\n",
           "",
           "a copy policy with no framework to copy into is not refused",
           t(IDENTITY, "test_copy_without_any_framework_says_what_to_do")),
    Mutant("borrowed_handle_kept_without_a_copy", "handle.h",
           "        if (!borrowed_) {\n            inc_ref();",
           "        if (true) {\n            inc_ref();",
           "nanobind: an export that keeps the tensor keeps the borrowed stack handle (and no owner reference)",
           t(EXPORT, "test_owner_is_released_exactly_once_after_the_last_reference")
           + t(OWNERSHIP, "test_kept_tensor_keeps_the_producer_alive")),
    Mutant("jax_adopts_any_strides", "frameworks.h",
           "if (framework == fw_jax) return !has_order(t, 'A');",
           "if (framework == fw_jax) return false;",
           "non-compact strides are handed to JAX, which cannot adopt them",
           t(PRODUCERS, "test_return_has_the_framework_dtype_and_values")),

    # ---- conversions (import.h, conversion.h) --------------------------------------------------------------
    Mutant("noconvert_converts", "import.h",
           "if (!convert || !conversion_may_fix(r, out.seen, why))",
           "if (!conversion_may_fix(r, out.seen, why))",
           ".noconvert() arguments are converted",
           t(CONVERSION, "test_noconvert_refuses_a_copy")),
    Mutant("f_order_converted_to_c", "conversion.h",
           "const char order = r.order == 'F' ? 'F' : r.order ? 'C' : 'K';",
           "const char order = r.order ? 'C' : 'K';",
           "conversions for f_contig parameters ask the producer for C order",
           t(CONVERSION, "test_order_conversion_for_read_only_parameters")),

    # ---- array_t's members and local results (array_t_members.h, construction.h) ----------------------
    Mutant("element_index_bound_off_by_one", "array_t_members.h",
           "(uint64_t) idx[k] >= (uint64_t) t.shape(k)",
           "(uint64_t) idx[k] > (uint64_t) t.shape(k)",
           "at(i, j) / data(i, j) accept the index one past the end of an axis",
           t(PORTING, "test_element_access_out_of_range_raises_index_error")),
    Mutant("element_offset_assumes_c_order", "array_t_members.h",
           "            off += idx[k] * t.stride(k);",
           "            off = off * t.shape(k) + idx[k];",
           "element pointers are computed as if every tensor were C-contiguous (strides ignored)",
           t(PORTING, "test_element_pointers_follow_the_strides")),
    Mutant("copy_of_copies_elements_not_bytes", "array_t_members.h",
           "std::memcpy((void *) t.data(), data, t.nbytes());",
           "std::memcpy((void *) t.data(), data, t.size());",
           "copy_of() copies size() bytes instead of nbytes(): only the first part of the values arrive",
           t(PORTING, "test_local_container_result_holds_the_values_after_the_function_returned",
             "test_copy_of_copies_in_the_annotated_order")),
    Mutant("adopted_container_never_freed", "construction.h",
           "delete static_cast<C *>(PyCapsule_GetPointer(self, container_owner_name));",
           "(void) PyCapsule_GetPointer(self, container_owner_name);",
           "the capsule that owns an adopted container forgets to delete it (a leak)",
           t(PORTING, "test_adopted_container_is_freed_once_with_its_last_reference")),
    Mutant("adopt_accepts_a_shape_smaller_than_the_container", "construction.h",
           "if (check_count && n != count)",
           "if (check_count && n > count)",
           "adopt() accepts a shape with fewer elements than the container (values silently dropped)",
           t(PORTING, "test_factory_shape_mistakes_raise")),

    # ---- refusal records (refusal.h, refusal_log.h) -------------------------------------------------------
    Mutant("refusal_kind_not_recorded", "refusal.h",
           "    r.tensor_known = true;\n    r.why = why;",
           "    r.tensor_known = true;",
           "the refused tensor's facts are recorded but not which check failed: the explanation names a stale kind",
           t(EXPLAIN, "test_refusal_is_explained", "test_converted_argument_is_explained_by_the_converted_tensors_failed_check"),
           equivalent="every route that notes a refused tensor returns its mismatch to import_tensor, whose "
                      "detail::refuse() records the kind again (also for the converted array of a list): the "
                      "kind written here is always overwritten before anyone reads it"),
    Mutant("refusal_ring_read_from_slot_0", "refusal_log.h",
           "const unsigned first = (log.next + refusal_log::capacity - log.count) % refusal_log::capacity;",
           "const unsigned first = 0;",
           "the refusal ring is read from its first slot: once it wraps, old refusals come out as the newest",
           t(EXPLAIN, "test_refusal_log_keeps_the_most_recent_refusals_oldest_first")),
    Mutant("refusal_log_not_cleared", "refusal_log.h",
           "    if (clear) log.count = 0;\n",
           "",
           "refusals(clear=True) reads the log but does not empty it",
           t(EXPLAIN, "test_refusals_are_recorded_per_thread_and_cleared")),
    Mutant("refusal_log_shared_by_threads", "refusal_log.h",
           "static thread_local refusal_log log;",
           "static refusal_log log;",
           "one refusal log for all threads: a thread reads another thread's refusals",
           t(EXPLAIN, "test_refusals_are_recorded_per_thread_and_cleared")),

    # ---- NumPy returns through NumPy's C API (numpy_c_api.h) ----------------------------------------------
    Mutant("numpy_c_api_ignores_read_only", "numpy_c_api.h",
           "read_only ? 0 : writeable",
           "writeable",
           "arrays made through NumPy's C API are writable even for const (read-only) returns",
           t(EXPORT, "test_const_return_is_read_only")
           + t(PRODUCERS, "test_numpy_returns_are_the_same_array_through_numpys_c_api_and_the_public_route")),
    Mutant("numpy_c_api_assumes_c_order", "numpy_c_api.h",
           "strides[i] = t.strides ? (Py_ssize_t) t.strides[i] * item : step;",
           "strides[i] = step;",
           "arrays made through NumPy's C API get C-order strides whatever the tensor's strides",
           t(EXPORT, "test_strides_and_byte_offset_on_export")
           + t(PRODUCERS, "test_numpy_returns_are_the_same_array_through_numpys_c_api_and_the_public_route")),
    Mutant("numpy_c_api_drops_byte_offset", "numpy_c_api.h",
           "(char *) t.data + t.byte_offset",
           "(char *) t.data",
           "arrays made through NumPy's C API start at data, ignoring byte_offset",
           t(EXPORT, "test_strides_and_byte_offset_on_export")),
]
