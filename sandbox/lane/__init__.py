"""Stage 3, warm-up and the device lane: one judgement at a time on a device, the warm-up's
single budget and its yields of the device, and the quiet checks before measuring."""
