OPENING_KEY = "loaded"
