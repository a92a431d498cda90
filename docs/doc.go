// Package docs holds Herald's documentation. It has no code: its tests
// check the figures the documents state against figures.json, the one
// record of the measured figures they quote, and regenerate the tables
// made from it (go test ./docs -run Figures -update).
package docs
