import t from 'tap'
import { parseProto, tokenize } from '../../../scripts/chain-fields/proto.js'

const PROTO = `syntax = "proto3";
package inference.bls;

import "gogoproto/gogo.proto";
option go_package = "https://example.com//types"; // "//" inside a string is not a comment
option java_package = 'a "quoted" name';

/* message Fake { int32 x = 1; } is a comment */
enum DKGPhase {
  DKG_PHASE_UNDEFINED = 0;
  DKG_PHASE_DEALING = 1;
}

message EpochBLSData {
  option (gogoproto.equal) = true;
  reserved 20, 21 to 23;
  uint64 epoch_id = 1; // trailing comment
  repeated Participant participants = 4 [(gogoproto.nullable) = false];
  DKGPhase dkg_phase = 5;
  .inference.bls.Nested.Inner inner = 6 [(x.y) = { a: 1 }, deprecated = true];
  map<string, int64> weights = 7;
  oneof choice {
    string a = 8;
    bytes b = 9;
  }
  optional int32 maybe = 0x0B;
  message Participant {
    string address = 1;
    enum Kind { KIND_UNSET = 0; }
    Kind kind = 2;
  }
  extensions 100 to 199;
  ;
}

service Query {
  rpc Get (EpochBLSData) returns (EpochBLSData) { option (google.api.http).get = "/x/{id}"; }
}
`

t.test('tokens: comments and white space left out, strings kept whole', async (t) => {
  t.same(tokenize('a.b = "x // y"; // c\n/* d */ \'e\' -1 0x1F;'), ['a.b', '=', '"x // y"', ';', "'e'", '-1', '0x1F', ';'])
  t.same(tokenize(''), [])
  t.same(parseProto('// nothing'), { package: '', messages: [], enums: [] })
})

t.test('messages (nested ones by full name), their fields and the enums', async (t) => {
  const parsed = parseProto(PROTO)
  t.equal(parsed.package, 'inference.bls')
  t.same(parsed.enums, ['inference.bls.DKGPhase', 'inference.bls.EpochBLSData.Participant.Kind'])
  t.same(parsed.messages.map((m) => m.name), ['inference.bls.EpochBLSData', 'inference.bls.EpochBLSData.Participant'])
  t.same(parsed.messages[0]?.fields, [
    { number: 1, name: 'epoch_id', type: 'uint64', repeated: false },
    { number: 4, name: 'participants', type: 'Participant', repeated: true },
    { number: 5, name: 'dkg_phase', type: 'DKGPhase', repeated: false },
    { number: 6, name: 'inner', type: '.inference.bls.Nested.Inner', repeated: false },
    { number: 7, name: 'weights', type: 'map<string, int64>', repeated: false },
    { number: 8, name: 'a', type: 'string', repeated: false },
    { number: 9, name: 'b', type: 'bytes', repeated: false },
    { number: 11, name: 'maybe', type: 'int32', repeated: false }
  ], 'options, reserved ranges, extensions and oneof wrappers skipped; a oneof\'s fields are the message\'s')
  t.same(parsed.messages[1]?.fields, [
    { number: 1, name: 'address', type: 'string', repeated: false },
    { number: 2, name: 'kind', type: 'Kind', repeated: false }
  ])
  t.same(parseProto('message Empty {}'), { package: '', messages: [{ name: 'Empty', fields: [] }], enums: [] }, 'no package')
})

t.test('text it cannot follow is an error that says where', async (t) => {
  t.throws(() => parseProto('message A { int32 a = b; }'), /field a: its number is not an integer/)
  t.throws(() => parseProto('message A { int32 a 1; }'), /expected "=", found "1"/)
  t.throws(() => parseProto('message A {'), /unexpected end of the \.proto text/)
  t.throws(() => parseProto('enum E { A = 0;'), /unexpected end/)
})
