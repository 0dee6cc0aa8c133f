#pragma once
// The rewrite layer (include/xexp/rewrite/): see docs/ARCHITECTURE.md.
