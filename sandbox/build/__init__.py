"""Stage 2, build: the candidate's extensions and Triton kernels built apart from judging, in their
own isolated worker, into a content-addressed cache and a per-judgement working tier."""
