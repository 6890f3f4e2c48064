# gguf_vocab.py - writes a vocabulary-only GGUF (v3, no tensors) for the tokenizer suites
# (tests/tools/llama3_vocab.py, hf_vocab.py). GGUF layout facts: docs/perf/anchors.md (GGUF).
import struct

# tokenizer.ggml.token_type values (the GGUF convention)
NORMAL, CONTROL, USER_DEFINED = 1, 3, 4


def _s(b):  # GGUF string: u64 length + bytes
    return struct.pack('<Q', len(b)) + b


def _key(k, vtype):
    return _s(k.encode()) + struct.pack('<I', vtype)


def kv_str(k, v):
    return _key(k, 8) + _s(v.encode())


def kv_u32(k, v):
    return _key(k, 4) + struct.pack('<I', v)


def kv_bool(k, v):
    return _key(k, 7) + struct.pack('<B', 1 if v else 0)


def kv_arr_str(k, vs):
    return _key(k, 9) + struct.pack('<IQ', 8, len(vs)) + b''.join(_s(v.encode('utf-8')) for v in vs)


def kv_arr_i32(k, vs):
    return _key(k, 9) + struct.pack('<IQ', 5, len(vs)) + struct.pack('<%di' % len(vs), *vs)


def write(path, kvs):
    """kvs: encoded key/value pairs (kv_*); writes header, pairs and the (empty) data section."""
    body = b'GGUF' + struct.pack('<IQQ', 3, 0, len(kvs)) + b''.join(kvs)
    body += b'\0' * ((32 - len(body) % 32) % 32)  # data section (empty) at the default alignment
    with open(path, 'wb') as f:
        f.write(body)
