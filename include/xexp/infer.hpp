#pragma once
// The infer layer (include/xexp/infer/): see docs/ARCHITECTURE.md.
