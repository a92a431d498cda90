package stateoutput

// PostgresTableBody is the table definition, for the test that the docs
// show it.
const PostgresTableBody = postgresTableBody

// MarshalEvent is an event as the queue outputs send it.
var MarshalEvent = marshalEvent
