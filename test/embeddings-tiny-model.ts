/**
 * Writes a tiny BERT-shaped model for @huggingface/transformers, made here (no download): an ONNX graph
 * with BERT's inputs (input_ids, attention_mask, token_type_ids) and output (last_hidden_state), built
 * from a word-embedding Gather, a token-type Gather, a MatMul and a Tanh, masked by the attention mask;
 * plus a WordPiece tokenizer.json, tokenizer_config.json and config.json. Random fixed weights: it checks
 * the loading path, shapes, normalization and determinism, not meaning.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const WORDS =
  'the a an to of and in on for is are be can not cannot user users log login sign account access password ' +
  'reset invoice invoices billing export total totals search task tasks find fast slow page error after failed';
const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface TinyModelOptions {
  /** Hidden size (the embedding dims). Default 16. */
  dims?: number;
  /** Also write the graph as onnx/model_quantized.onnx (what dtype `auto` prefers). */
  quantizedCopy?: boolean;
  /** Write this instead of a valid graph (a broken model that must fail to load). */
  corruptOnnx?: boolean;
}

function vocabulary(): string[] {
  const v = [...SPECIAL, ...WORDS.split(' '), '##s', '##ed', '##ing'];
  for (const c of LETTERS) v.push(c, `##${c}`);
  v.push('.', ',', "'", '!', '?', '-', ':');
  return [...new Set(v)];
}

/** Deterministic pseudo-random floats in [-0.5, 0.5). */
function floats(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}

export function tinyBertOnnx(vocabSize: number, dims: number): Uint8Array {
  const T = onnx.TensorProto.DataType;
  const INT = onnx.AttributeProto.AttributeType.INT;
  const tensor = (name: string, dimsOf: number[], data: Float32Array) => ({
    name,
    dims: dimsOf,
    dataType: T.FLOAT,
    rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  });
  const valueInfo = (name: string, elemType: number, shape: (string | number)[]) => ({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: shape.map((s) => (typeof s === 'string' ? { dimParam: s } : { dimValue: s })) },
      },
    },
  });
  const graph = {
    name: 'tiny-bert',
    initializer: [
      tensor('word_embeddings', [vocabSize, dims], floats(vocabSize * dims, 1)),
      tensor('token_type_embeddings', [2, dims], floats(2 * dims, 2)),
      tensor('dense', [dims, dims], floats(dims * dims, 3)),
      { name: 'unsqueeze_axes', dims: [1], dataType: T.INT64, int64Data: [2] },
    ],
    input: [
      valueInfo('input_ids', T.INT64, ['batch', 'sequence']),
      valueInfo('attention_mask', T.INT64, ['batch', 'sequence']),
      valueInfo('token_type_ids', T.INT64, ['batch', 'sequence']),
    ],
    output: [valueInfo('last_hidden_state', T.FLOAT, ['batch', 'sequence', dims])],
    node: [
      {
        opType: 'Gather',
        input: ['word_embeddings', 'input_ids'],
        output: ['words'],
        attribute: [{ name: 'axis', type: INT, i: 0 }],
      },
      { opType: 'Gather', input: ['token_type_embeddings', 'token_type_ids'], output: ['types'] },
      { opType: 'Add', input: ['words', 'types'], output: ['embedded'] },
      { opType: 'MatMul', input: ['embedded', 'dense'], output: ['projected'] },
      { opType: 'Tanh', input: ['projected'], output: ['hidden'] },
      {
        opType: 'Cast',
        input: ['attention_mask'],
        output: ['mask'],
        attribute: [{ name: 'to', type: INT, i: T.FLOAT }],
      },
      { opType: 'Unsqueeze', input: ['mask', 'unsqueeze_axes'], output: ['mask3'] },
      { opType: 'Mul', input: ['hidden', 'mask3'], output: ['last_hidden_state'] },
    ],
  };
  const model = {
    irVersion: 7,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'backlog-search tests',
    graph,
  };
  return onnx.ModelProto.encode(onnx.ModelProto.fromObject(model)).finish();
}

function tokenizerJson(vocab: string[]) {
  const special = (id: string, typeId = 0) => ({ SpecialToken: { id, type_id: typeId } });
  const sequence = (id: string, typeId = 0) => ({ Sequence: { id, type_id: typeId } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), sequence('A'), special('[SEP]')],
      pair: [special('[CLS]'), sequence('A'), special('[SEP]'), sequence('B', 1), special('[SEP]', 1)],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((w, i) => [w, i])),
    },
  };
}

/**
 * Writes the model as `<root>/<modelId>/{config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx}`,
 * the layout transformers.js reads with `env.localModelPath = root`. Returns the model folder.
 */
export async function writeTinyBertModel(
  root: string,
  modelId: string,
  options: TinyModelOptions = {},
): Promise<string> {
  const dims = options.dims ?? 16;
  const vocab = vocabulary();
  const dir = join(root, modelId);
  await mkdir(join(dir, 'onnx'), { recursive: true });
  const graph = options.corruptOnnx
    ? new TextEncoder().encode('this is not an onnx model')
    : tinyBertOnnx(vocab.length, dims);
  await writeFile(join(dir, 'onnx', 'model.onnx'), graph);
  if (options.quantizedCopy) await writeFile(join(dir, 'onnx', 'model_quantized.onnx'), graph);
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      architectures: ['BertModel'],
      hidden_size: dims,
      vocab_size: vocab.length,
      max_position_embeddings: 512,
      num_attention_heads: 1,
      num_hidden_layers: 1,
      type_vocab_size: 2,
    }),
  );
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
  await writeFile(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: 512,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      mask_token: '[MASK]',
    }),
  );
  return dir;
}
