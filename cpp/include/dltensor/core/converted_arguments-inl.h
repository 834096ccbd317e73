// dltensor/core/converted_arguments-inl.h: the bodies of converted_arguments.h's core entry points (DLTENSOR_CORE).
#pragma once

#include "converted_arguments.h"

namespace dlt {

namespace detail {

DLTENSOR_CORE converted_argument *&converted_arguments() noexcept {
    static thread_local converted_argument *newest = nullptr;
    return newest;
}

}  // namespace detail

DLTENSOR_CORE PyObject *converted_owner_of(PyObject *argument) noexcept {
    for (converted_argument *a = detail::converted_arguments(); a; a = a->next)
        if (a->argument == argument) return a->owner;
    return nullptr;
}

}  // namespace dlt
