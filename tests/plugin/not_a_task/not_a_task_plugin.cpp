// SPDX-License-Identifier: MIT
#include "not_a_task_plugin.h"
