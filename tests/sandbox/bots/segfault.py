"""Dies of a segmentation fault (reads address 0)."""

import ctypes

ctypes.string_at(0)
