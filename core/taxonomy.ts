/**
 * The vocabularies jobsnap speaks: schedule types, categories, levels and the
 * legacy labels v1 prints for them. One table each, so the v1 labels, the v2
 * filters, the MCP tool descriptions and `explain_schedule_type` can never
 * drift apart.
 */

export interface ScheduleDefinition {
  /** Legacy v1 `reduced_hours` text, e.g. "4 day week". */
  label: string
  /** Typical weekly hours for a full-time employee on this schedule. */
  typicalWeeklyHours: number
  /** True when the schedule really lowers weekly hours, not just rearranges them. */
  reducesHours: boolean
  /** True when pay stays at the full-time rate despite fewer hours. */
  fullPay: boolean
  /** Counts as a four-day week in search results and statistics. */
  isFourDayWeek: boolean
  /** One or two sentences for people and models. */
  definition: string
}

/**
 * Every schedule type. A compressed schedule (four days, same 40 hours) is
 * deliberately its own type with `isFourDayWeek: false`: it does not reduce
 * hours, so it is never presented as a four-day week.
 */
export const SCHEDULE_TYPES = {
  '4_day_week': {
    label: '4 day week',
    typicalWeeklyHours: 32,
    reducesHours: true,
    fullPay: true,
    isFourDayWeek: true,
    definition:
      'Four working days a week (usually 32 hours) at full pay. A true four-day week: hours go down, pay does not.',
  },
  '9_day_fortnight': {
    label: '9 day fortnight',
    typicalWeeklyHours: 36,
    reducesHours: true,
    fullPay: true,
    isFourDayWeek: false,
    definition:
      'Nine working days every two weeks (one extra day off per fortnight, about 36 hours a week) at full pay.',
  },
  '4_5_day_week': {
    label: '4.5 day week',
    typicalWeeklyHours: 36,
    reducesHours: true,
    fullPay: true,
    isFourDayWeek: false,
    definition: 'Four and a half working days a week (a half day off each week, about 36 hours) at full pay.',
  },
  reduced_hours: {
    label: 'Reduced hours',
    typicalWeeklyHours: 35,
    reducesHours: true,
    fullPay: true,
    isFourDayWeek: false,
    definition: 'Five shorter working days (for example 6 or 7 hours a day) at full pay.',
  },
  compressed_hours: {
    label: 'Compressed hours',
    typicalWeeklyHours: 40,
    reducesHours: false,
    fullPay: true,
    isFourDayWeek: false,
    definition:
      'The same full-time hours (usually 40) squeezed into fewer, longer days, e.g. four 10-hour days. Hours do not go down, so this is NOT a four-day week.',
  },
  part_time: {
    label: 'Part time',
    typicalWeeklyHours: 24,
    reducesHours: true,
    fullPay: false,
    isFourDayWeek: false,
    definition: 'Fewer hours than full time with pay reduced pro rata. Not a full-pay reduced-hours schedule.',
  },
  standard: {
    label: 'Standard week',
    typicalWeeklyHours: 40,
    reducesHours: false,
    fullPay: true,
    isFourDayWeek: false,
    definition: 'A conventional five-day full-time week (about 40 hours).',
  },
} as const satisfies Record<string, ScheduleDefinition>

export type ScheduleType = keyof typeof SCHEDULE_TYPES
export const SCHEDULE_TYPE_VALUES = Object.keys(SCHEDULE_TYPES) as [ScheduleType, ...ScheduleType[]]

/** Job categories and their v1 labels. Unknown slugs are labelled by title-casing. */
export const CATEGORY_LABELS: Record<string, string> = {
  engineering: 'Engineering',
  data: 'Data',
  design: 'Design',
  product: 'Product',
  marketing: 'Marketing',
  sales: 'Sales',
  'customer-success': 'Customer Success',
  operations: 'Operations',
  finance: 'Finance',
  people: 'People',
  legal: 'Legal',
}

/** Seniority levels and their v1 labels. */
export const LEVEL_LABELS: Record<string, string> = {
  intern: 'Intern',
  junior: 'Junior',
  mid: 'Mid-level',
  senior: 'Senior',
  lead: 'Lead',
  principal: 'Principal',
  director: 'Director',
}

/** Employer office-presence policies, with the legacy v1 `remote_level` text. */
export const REMOTE_LEVELS = {
  fully_remote: { label: '100% remote', definition: 'No office required; everyone works remotely.' },
  remote_friendly: { label: 'Offers remote', definition: 'Has offices, and offers remote or hybrid work.' },
  onsite: { label: 'Onsite', definition: 'Work happens at the office.' },
} as const
export type RemoteLevel = keyof typeof REMOTE_LEVELS
export const REMOTE_LEVEL_VALUES = Object.keys(REMOTE_LEVELS) as [RemoteLevel, ...RemoteLevel[]]

export const WORK_ARRANGEMENTS = ['onsite', 'hybrid', 'remote'] as const
export type WorkArrangement = (typeof WORK_ARRANGEMENTS)[number]

export const CONTRACT_TYPES = ['permanent', 'contract', 'freelance'] as const
export const SALARY_PERIODS = ['year', 'month', 'hour'] as const
export type SalaryPeriod = (typeof SALARY_PERIODS)[number]

function titleCase(slug: string): string {
  return slug
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ')
}

export function categoryLabel(slug: string): string {
  return CATEGORY_LABELS[slug] ?? titleCase(slug)
}

export function levelLabel(slug: string): string {
  return LEVEL_LABELS[slug] ?? titleCase(slug)
}

export function scheduleLabel(type: ScheduleType): string {
  return SCHEDULE_TYPES[type].label
}
