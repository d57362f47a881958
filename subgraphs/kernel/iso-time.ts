/**
 * `date.toISOString()`, about three times faster, as one flat string: the DateTime scalar formats every timestamp of
 * every answer (a page of 50 posts has over a hundred), and V8's `toISOString` was 5 to 6% of the service's CPU on the
 * posts list.
 * Years 0000 to 9999 are formatted here from the time value (days to a civil date by Howard Hinnant's
 * `civil_from_days`); anything else, an invalid date included, is left to `toISOString` (which throws the same
 * RangeError for an invalid one).
 */
// The character codes of the tens and the units digit of 0 to 99.
const TENS = Array.from({ length: 100 }, (_, i) => 48 + Math.floor(i / 10));
const UNITS = Array.from({ length: 100 }, (_, i) => 48 + (i % 10));
const DAY_MS = 86_400_000;
const YEAR_0 = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const YEAR_10000 = 253_402_300_800_000; // 10000-01-01T00:00:00.000Z

export function isoTime(date: Date): string {
  const time = date.getTime();
  if (!(time >= YEAR_0 && time < YEAR_10000)) return date.toISOString();
  const days = Math.floor(time / DAY_MS);
  let ms = time - days * DAY_MS;
  const z = days + 719_468; // days since 0000-03-01
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100)); // from March 1st
  const m = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * m + 2) / 5) + 1;
  const month = m < 10 ? m + 3 : m - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(ms / 3_600_000);
  ms -= hours * 3_600_000;
  const minutes = Math.floor(ms / 60_000);
  ms -= minutes * 60_000;
  const seconds = Math.floor(ms / 1000);
  ms -= seconds * 1000;
  // One flat string from its 24 character codes (a template literal of 15 parts makes a chain of partial strings).
  const century = Math.floor(year / 100);
  const yy = year % 100;
  const cs = Math.floor(ms / 10);
  // prettier-ignore
  return String.fromCharCode(
    TENS[century], UNITS[century], TENS[yy], UNITS[yy], 45, TENS[month], UNITS[month], 45, TENS[day], UNITS[day], 84,
    TENS[hours], UNITS[hours], 58, TENS[minutes], UNITS[minutes], 58, TENS[seconds], UNITS[seconds], 46,
    TENS[cs], UNITS[cs], 48 + (ms % 10), 90,
  );
}
