// dltensor/core/exchange-inl.h: the bodies of exchange.h's core entry points (config.h: DLTENSOR_CORE).
#pragma once

#include "exchange.h"
#include "capsule_import-inl.h"
#include "../tensor/strides-inl.h"

namespace dlt {

DLTENSOR_CORE const dlpack::ExchangeAPI *find_exchange_api(PyTypeObject *tp) noexcept {
    PyObject *name = py_names::get().exchange_api;
    if (!name) return nullptr;
    PyObject *capsule = _PyType_Lookup(tp, name);  // borrowed
    if (!capsule || !PyCapsule_CheckExact(capsule)) return nullptr;
    auto *h =
        static_cast<dlpack::ExchangeAPIHeader *>(PyCapsule_GetPointer(capsule, dlpack::exchange_api_capsule_name));
    if (!h) {
        PyErr_Clear();
        return nullptr;
    }
    for (int hops = 0; h && hops < 16; h = h->prev_api, ++hops) {
        if (h->version.major != dlpack::major_version) continue;
        auto *api = reinterpret_cast<const dlpack::ExchangeAPI *>(h);
        if (api->managed_tensor_allocator && api->managed_tensor_from_py_object_no_sync &&
            api->managed_tensor_to_py_object_no_sync && api->current_work_stream)
            return api;
        return nullptr;  // a table missing mandatory entries is not used
    }
    return nullptr;
}

}  // namespace dlt
