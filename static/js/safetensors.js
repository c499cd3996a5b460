// safetensors.js - reads only the header of a .safetensors file in the browser.
//
// Layout (huggingface/safetensors README, "Format"): 8 bytes N (unsigned little-endian u64),
// N bytes of UTF-8 JSON header, then the tensor data. The header is capped at 100 MB by the
// format. We read those 8 + N bytes with File.slice and send exactly them, never the weights.

const MAX_HEADER = 100 * 1000 * 1000; // the format's own cap (safetensors README)

export async function readSafetensorsHeader(file) {
    if (file.size < 8) throw new Error(`${file.name} is ${file.size} bytes: too short for a safetensors file (8-byte length first).`);
    const lenBuf = await file.slice(0, 8).arrayBuffer();
    const n = new DataView(lenBuf).getBigUint64(0, true);
    if (n === 0n || n > BigInt(MAX_HEADER)) throw new Error(`${file.name}: header length ${n} is outside 1..${MAX_HEADER} bytes; not a safetensors file?`);
    const len = Number(n);
    if (8 + len > file.size) throw new Error(`${file.name}: header length ${len} runs past the end of the file (${file.size} bytes).`);
    const blob = file.slice(0, 8 + len, 'application/octet-stream');
    const text = new TextDecoder('utf-8', { fatal: true }).decode(await file.slice(8, 8 + len).arrayBuffer());
    let header;
    try {
        header = JSON.parse(text);
    } catch (err) {
        throw new Error(`${file.name}: the safetensors header is not valid JSON (${err.message}).`);
    }
    if (!header || typeof header !== 'object' || Array.isArray(header)) throw new Error(`${file.name}: the safetensors header is not a JSON object.`);
    const tensors = Object.keys(header).filter((k) => k !== '__metadata__').length;
    return { blob, tensors, headerBytes: len };
}

// "safetensors", "json", "csv" or "text" (a text format the server detects from content:
// XLA's *.buffer-assignment.txt, HLO or StableHLO text): by extension first, then by content.
export async function detectFormat(file) {
    const name = file.name.toLowerCase();
    if (name.endsWith('.safetensors')) return 'safetensors';
    if (name.endsWith('.json')) return 'json';
    if (name.endsWith('.csv')) return 'csv';
    if (name.endsWith('.txt') || name.endsWith('.hlo') || name.endsWith('.mlir')) return 'text';
    const head = new Uint8Array(await file.slice(0, 256).arrayBuffer());
    let i = 0;
    while (i < head.length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) i++;
    if (head[i] === 0x7b /* { */) return 'json';
    if (head.length > 8 && head[8] === 0x7b) return 'safetensors';
    const text = new TextDecoder().decode(head.subarray(i));
    if (text.startsWith('BufferAssignment:')) return 'text';
    if (/^(HloModule |module[ @{]|func\.func |#loc)/.test(text)) return 'text';
    return 'csv';
}
