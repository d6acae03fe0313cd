export { type RepairedArguments, repairArguments, type RepairRefusal } from './repair-arguments'
export { REPAIR_STEPS, type RepairRecord, type RepairStep } from './repair-step'
export { maskRepairedText, maskRepairRecord, UNMASKABLE_FROM } from './mask-repaired-text'
