"""Tools over the checkout itself: the protocol's generated code (``genproto``, for developers)
and the SDK's wheel of the running version (``sdkwheel``: ``/sdk``, ``referee sdk wheel``)."""
