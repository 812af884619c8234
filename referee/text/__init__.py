"""Outside text: name rules and text made safe to show (imports nothing heavy)."""
