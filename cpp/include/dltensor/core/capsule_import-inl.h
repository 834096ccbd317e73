// dltensor/core/capsule_import-inl.h: the bodies of capsule_import.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "capsule_import.h"
#include "../python/producer_error-inl.h"
#include "../python/process_state-inl.h"
#include "../tensor/refusal-inl.h"

namespace dlt {

namespace detail {

DLTENSOR_CORE void restore_consumed_capsule(PyObject *capsule, PyObject *owner) noexcept {
    const bool versioned = PyCapsule_IsValid(owner, owner_name_versioned);
    if (!versioned && !PyCapsule_IsValid(owner, owner_name)) return;
    void *context = PyCapsule_GetContext(owner);
    PyCapsule_Destructor producer_destructor;
    std::memcpy(&producer_destructor, &context, sizeof context);
    const char *used = versioned ? dlpack::used_capsule_name_versioned : dlpack::used_capsule_name;
    const char *name = PyCapsule_GetName(capsule);
    if (!name || std::strcmp(name, used) != 0) {
        PyErr_Clear();
        return;
    }
    if (PyCapsule_SetDestructor(owner, nullptr) == 0) {
        PyCapsule_SetName(capsule, versioned ? dlpack::capsule_name_versioned : dlpack::capsule_name);
        PyCapsule_SetDestructor(capsule, producer_destructor);
    }
    PyErr_Clear();
}

DLTENSOR_CORE consumed_capsules *&open_consumed_capsules() noexcept {
    static thread_local consumed_capsules *open = nullptr;
    return open;
}

}  // namespace detail

}  // namespace dlt
