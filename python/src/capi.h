// hvd._core's side of hvd_capi.h: the one table over the process's default runtime.
#pragma once

#include "hvd_capi.h"

/// The table (static; valid for the life of the process).
const hvd_capi* hvd_capi_table();
