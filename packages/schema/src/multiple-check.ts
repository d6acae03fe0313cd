// The same decimal arithmetic schemastery uses, so `0.07` counts as a multiple of `0.01`.
function decimalShift(data: number, digits: number) {
  const str = data.toString()
  if (str.includes('e')) return data * Math.pow(10, digits)
  const index = str.indexOf('.')
  if (index === -1) return data * Math.pow(10, digits)
  const frac = str.slice(index + 1)
  const integer = str.slice(0, index)
  if (frac.length <= digits) return +(integer + frac.padEnd(digits, '0'))
  return +(integer + frac.slice(0, digits) + '.' + frac.slice(digits))
}

/** schemastery's `isMultipleOf`, with everything about `min` and `step` worked out once. */
export function multipleCheck(min: number, step: number): (data: number) => boolean {
  step = Math.abs(step)
  if (!/^\d+\.\d+$/.test(step.toString())) return (data) => (data - min) % step === 0
  const digits = step.toString().length - step.toString().indexOf('.') - 1
  const pow = Math.pow(10, digits)
  const shiftedMin = decimalShift(min, digits), shiftedStep = decimalShift(step, digits)
  return (data) => {
    // for integers decimalShift is exactly `data * pow`, without the string round trip
    const shifted = Number.isInteger(data) ? data * pow : decimalShift(data, digits)
    return Math.abs(shifted - shiftedMin) % shiftedStep === 0
  }
}
