package search

import (
	"sync/atomic"

	"github.com/memtray/memtray/backend/config"
)

// floors holds the similarity floors set after New (a model switch's
// calibration, see package calib); nil uses the config's.
type floors struct{ vector atomic.Pointer[float64] }

// SetVectorFloor replaces search.vector_floor for the searches that start
// after it: the daemon sets the new embedding model's calibrated value
// when it switches models. 0 goes back to the config's.
func (e *Engine) SetVectorFloor(v float64) {
	if v <= 0 {
		e.floors.vector.Store(nil)
		return
	}
	e.floors.vector.Store(&v)
}

// vectorFloor is the vector floor in effect: SetVectorFloor's, else the
// config's (the built-in model's 0.3 when the config leaves it unset).
func (e *Engine) vectorFloor() float64 {
	if p := e.floors.vector.Load(); p != nil {
		return *p
	}
	return e.cfg.Vector()
}

// SetFloor replaces the floor of the skill indexes built from now on
// (recall.skill_floor): the daemon sets the new embedding model's
// calibrated value when it switches models, and indexes are kept per
// model, so the new model's are built with it. 0 means the built-in
// model's 0.35.
func (c *SkillCatalog) SetFloor(v float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.floor = skillFloor(v)
}

// skillFloor is v, or config.BuiltinSkillFloor for 0 (not set).
func skillFloor(v float64) float64 { return config.Recall{SkillFloor: v}.Skill() }

// Skills returns the skill catalog WithSkills set (nil without one).
func (r *Recaller) Skills() *SkillCatalog { return r.skills }
