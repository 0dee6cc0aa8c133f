#pragma once
// The builder layer (include/xexp/builder/): see docs/ARCHITECTURE.md.
