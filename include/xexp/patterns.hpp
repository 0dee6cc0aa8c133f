#pragma once
// The patterns layer (include/xexp/patterns/): see docs/ARCHITECTURE.md.
