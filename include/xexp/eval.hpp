#pragma once
// The eval layer (include/xexp/eval/): see docs/ARCHITECTURE.md.
